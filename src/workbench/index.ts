export type * from './api.ts';
export { Engine, type EngineDeps, type EngineWords } from './engine.ts';
export { Jobs, type JobContext } from './jobs.ts';
export { applyEdit, entryColumns, previewRows, PREVIEW_ROWS, readSample, tableOf } from './map-view.ts';
export { PLAN_FILE, Project, STATE_DIR, stepNameFor } from './project.ts';
export { warningKind } from './reasons.ts';
export { admit, commonHeaders, newSession, PAGE_POLICY, REPORT_POLICY, SECRET_PARAM, sessionUrl, type Admission, type RequestFacts, type Session } from './security.ts';
export { PAGE_DIR, startWorkbenchServer, type RunningWorkbench, type WorkbenchServerOptions } from './server.ts';
