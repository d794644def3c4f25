export type * from './api.ts';
export { Engine, type EngineDeps, type EngineWords } from './engine.ts';
export { Jobs, type JobContext } from './jobs.ts';
export { applyEdit } from './map-edit.ts';
export { entryColumns, PREVIEW_ROWS } from './map-entries.ts';
export { previewRows, readSample } from './map-preview.ts';
export { tableOf } from './map-table.ts';
export { PLAN_FILE, Project, STATE_DIR, stepNameFor } from './project.ts';
export { warningKind } from './reasons.ts';
export {
  admit,
  commonHeaders,
  newSession,
  PAGE_POLICY,
  REPORT_POLICY,
  SECRET_PARAM,
  sessionUrl,
  type Admission,
  type RequestFacts,
  type Session,
} from './security.ts';
export { PAGE_DIR, startWorkbenchServer, type RunningWorkbench, type WorkbenchServerOptions } from './server.ts';
