import type { TSchema } from '@sinclair/typebox';
import { request } from '@hermes/bus';
import { Id, teamField, validate, type RequestContract } from '@hermes/contracts';
import {
  CliError,
  EXIT,
  TEAM_OPTION,
  UsageError,
  stringOption,
  teamOption,
  writeLine,
  type Command,
  type CommandContext,
  type OptionSpec,
  type OptionValues,
} from './command.js';
import { askService } from './service-request.js';
import { formatTable } from './text-table.js';

// A request or reply of the dispatcher's, as the schemas of the kind's contracts shape it.
type Record_ = Record<string, unknown>;

/** The bus requests, columns and create options behind one kind of owned record's commands (`hermes schedule`, `hermes trigger`). */
export interface OwnedCommandsOptions<V extends Record_> {
  kind: 'schedule' | 'trigger';
  /** The create request's spec, checked before anything is sent. */
  spec: TSchema;
  /** What to add to a refusal of the spec: the options a person must give. */
  specHint: string;
  createOptions: Record<string, OptionSpec>;
  /** The spec from the create command's options (checked against `spec` afterwards). */
  specOf: (values: OptionValues) => Record_;
  header: readonly string[];
  row: (record: V) => string[];
  create: RequestContract;
  get: RequestContract;
  list: RequestContract;
  update: RequestContract;
  remove: RequestContract;
  summaries: { create: string; list: string; show: string; pause: string; resume: string; delete: string };
}

const JSON_OPTION = { json: { type: 'boolean' as const, description: 'print the reply as JSON' } };

/**
 * create / list / show / pause / resume / delete of a user's records of one kind, over the same
 * dispatcher requests as the gateway's routes (services/gateway/src/owned-routes.ts).
 */
export function ownedCommands<V extends Record_>(o: OwnedCommandsOptions<V>): Command[] {
  const idField = `${o.kind}_id`;
  const ownerOption = { user: { type: 'string' as const, valueName: 'id', description: `user who owns the ${o.kind} (default: $HERMES_USER or cli-user)` } };
  // The contracts' request types are checked by `request` against their schemas at run time.
  const ask = async (ctx: CommandContext, contract: RequestContract, payload: Record_, notFound?: () => string): Promise<Record_> => {
    const bus = await ctx.bus();
    return (await askService('dispatcher', () => request(bus, contract, payload as never), {
      explainErrors: true,
      ...(notFound ? { notFound } : {}),
    })) as Record_;
  };
  const print = (ctx: CommandContext, records: V[], json: unknown) =>
    writeLine(ctx.stdout, json !== undefined ? JSON.stringify(json, null, 2) : formatTable([[...o.header], ...records.map(o.row)]));

  const create: Command = {
    path: [o.kind, 'create'],
    summary: o.summaries.create,
    args: '',
    minArgs: 0,
    maxArgs: 0,
    options: {
      ...TEAM_OPTION,
      ...ownerOption,
      ...o.createOptions,
      id: { type: 'string', valueName: 'id', description: `${o.kind} id (default: a new one)` },
      ...JSON_OPTION,
    },
    async execute({ values }, ctx) {
      const id = stringOption(values, 'id');
      const checked = validate(o.spec, { ...o.specOf(values), ...(id ? { [idField]: id } : {}) });
      if (!checked.ok) throw new UsageError(`invalid ${o.kind}: ${checked.issues.map((i) => `${i.path} ${i.message}`).join('; ')} (${o.specHint})`);
      const view = (await ask(ctx, o.create, { ...ownerOf(values, ctx.env), spec: checked.value })) as V;
      print(ctx, [view], values.json === true ? view : undefined);
      return EXIT.ok;
    },
  };

  const list: Command = {
    path: [o.kind, 'list'],
    summary: o.summaries.list,
    args: '',
    minArgs: 0,
    maxArgs: 0,
    options: { ...TEAM_OPTION, ...ownerOption, all: { type: 'boolean', description: `every user's ${o.kind}s of the team` }, ...JSON_OPTION },
    async execute({ values }, ctx) {
      const owner = ownerOf(values, ctx.env);
      const reply = await ask(ctx, o.list, { ...owner, ...(values.all === true ? { user_id: null } : {}) });
      print(ctx, reply[`${o.kind}s`] as V[], values.json === true ? reply : undefined);
      return EXIT.ok;
    },
  };

  const one = (verb: 'show' | 'pause' | 'resume' | 'delete'): Command => ({
    path: [o.kind, verb],
    summary: o.summaries[verb],
    args: `<${o.kind}-id>`,
    minArgs: 1,
    maxArgs: 1,
    options: { ...TEAM_OPTION, ...ownerOption, ...JSON_OPTION },
    async execute({ values, positionals }, ctx) {
      const id = idArg(o.kind, positionals[0]);
      const owner = ownerOf(values, ctx.env);
      const req = { ...owner, [idField]: id };
      const notFound = () => `no ${o.kind} ${id} of ${owner.user_id}`;
      if (verb === 'delete') {
        const reply = await ask(ctx, o.remove, req, notFound);
        // Nothing to delete is a failure (exit 1), as a not_found from the other verbs is; not a usage error.
        if (!reply.deleted) throw new CliError(notFound(), EXIT.failed);
        writeLine(ctx.stdout, values.json === true ? JSON.stringify(reply) : `deleted ${id}`);
        return EXIT.ok;
      }
      const view = (verb === 'show' ? await ask(ctx, o.get, req, notFound) : await ask(ctx, o.update, { ...req, paused: verb === 'pause' }, notFound)) as V;
      print(ctx, [view], values.json === true ? view : undefined);
      return EXIT.ok;
    },
  });

  return [create, list, one('show'), one('pause'), one('resume'), one('delete')];
}

function ownerOf(values: OptionValues, env: NodeJS.ProcessEnv): { user_id: string; team?: string } {
  const userId = stringOption(values, 'user') ?? env.HERMES_USER ?? 'cli-user';
  if (!validate(Id, userId).ok) throw new UsageError(`"${userId}" is not a user id`);
  return { user_id: userId, ...teamField(teamOption(values, env)) };
}

function idArg(kind: string, value: string | undefined): string {
  if (!validate(Id, value ?? '').ok) throw new UsageError(`"${value ?? ''}" is not a ${kind} id`);
  return value!;
}
