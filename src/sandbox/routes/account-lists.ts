/**
 * Lists the spec leaves out but the service serves (a declarative connector's recorded runs read
 * them): project boards and their stages, the reasons an opportunity is lost, and the site (the
 * account itself). All read-only, like the service's; an account's boards, stages and lost reasons
 * are seeded (seed.ts) and can be changed in tests through the store.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SandboxContext } from '../context.ts';
import { baseUrlOf, notFound, paginate, parseId } from '../http.ts';
import type { BoardRec, LostReasonRec, StageRec } from '../model.ts';
import type { Store } from '../store.ts';
import { SANDBOX_SUBDOMAIN } from '../oauth.ts';

/** The name the sandbox's account goes by in `GET /site`. */
export const SANDBOX_SITE_NAME = 'Sandbox';

/** The stages of the account in board order: boards by id, then each board's stages by position. */
export function stagesInOrder(store: Store): StageRec[] {
  const boardOrder = new Map(store.boards.all().map((board, index) => [board.id, index]));
  return store.stages
    .all()
    .sort(
      (a, b) =>
        (boardOrder.get(a.boardId) ?? Infinity) - (boardOrder.get(b.boardId) ?? Infinity) ||
        a.displayOrder - b.displayOrder ||
        a.id - b.id,
    );
}

/** The stage a new project starts on: the first stage of the first board; null for an account without stages. */
export function firstStageId(store: Store): number | null {
  return stagesInOrder(store)[0]?.id ?? null;
}

/** The boards with their stages, as the filters' `board` and `stage` fields read them. */
export function boardsWithStages(
  store: Store,
): Array<{ id: number; name: string; stages: Array<{ id: number; name: string }> }> {
  const stages = stagesInOrder(store);
  return store.boards.all().map((board) => ({
    id: board.id,
    name: board.name,
    stages: stages.filter((s) => s.boardId === board.id).map((s) => ({ id: s.id, name: s.name })),
  }));
}

/** `createdAt` and `updatedAt` of a list item, as live answers carry them; null for one saved before they were kept. */
function stamps(item: { createdAt?: string; updatedAt?: string }): {
  createdAt: string | null;
  updatedAt: string | null;
} {
  return { createdAt: item.createdAt ?? null, updatedAt: item.updatedAt ?? item.createdAt ?? null };
}

function boardJson(board: BoardRec): Record<string, unknown> {
  return { id: board.id, name: board.name, description: board.description, ...stamps(board) };
}

function stageJson(store: Store, stage: StageRec): Record<string, unknown> {
  const board = store.boards.get(stage.boardId);
  return {
    id: stage.id,
    name: stage.name,
    description: stage.description,
    board: board ? { id: board.id, name: board.name } : null,
    displayOrder: stage.displayOrder,
    ...stamps(stage),
  };
}

function lostReasonJson(reason: LostReasonRec): Record<string, unknown> {
  return { id: reason.id, name: reason.name, includedForConversion: reason.includedForConversion, ...stamps(reason) };
}

function idParam(request: FastifyRequest, name: string, what: string): number {
  return parseId((request.params as Record<string, string>)[name], what);
}

/** Registers `/boards`, `/stages`, `/lostreasons` and `/site` under `/api/v2`. */
export function registerAccountListRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const { store } = ctx;
  const board = (request: FastifyRequest): BoardRec => {
    const id = idParam(request, 'boardId', 'board');
    const found = store.boards.get(id);
    if (!found) throw notFound(`no board with id ${id}`);
    return found;
  };

  app.get('/api/v2/boards', async (request, reply) => ({
    boards: paginate(request, reply, store.boards.all()).map(boardJson),
  }));
  app.get('/api/v2/boards/:boardId', async (request) => ({ board: boardJson(board(request)) }));
  app.get('/api/v2/boards/:boardId/stages', async (request, reply) => {
    const { id } = board(request);
    const stages = stagesInOrder(store).filter((s) => s.boardId === id);
    return { stages: paginate(request, reply, stages).map((s) => stageJson(store, s)) };
  });

  app.get('/api/v2/stages', async (request, reply) => ({
    stages: paginate(request, reply, stagesInOrder(store)).map((s) => stageJson(store, s)),
  }));
  app.get('/api/v2/stages/:stageId', async (request) => {
    const id = idParam(request, 'stageId', 'stage');
    const stage = store.stages.get(id);
    if (!stage) throw notFound(`no stage with id ${id}`);
    return { stage: stageJson(store, stage) };
  });

  app.get('/api/v2/lostreasons', async (request, reply) => ({
    lostReasons: paginate(request, reply, store.lostReasons.all()).map(lostReasonJson),
  }));
  app.get('/api/v2/lostreasons/:lostReasonId', async (request) => {
    const id = idParam(request, 'lostReasonId', 'lost reason');
    const reason = store.lostReasons.get(id);
    if (!reason) throw notFound(`no lost reason with id ${id}`);
    return { lostReason: lostReasonJson(reason) };
  });

  // The account itself. The sandbox serves one account, in UTC, at the address it was asked on.
  app.get('/api/v2/site', async (request) => ({
    site: { name: SANDBOX_SITE_NAME, subdomain: SANDBOX_SUBDOMAIN, url: baseUrlOf(request), timezone: 'UTC' },
  }));
}
