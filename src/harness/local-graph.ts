/**
 * Local graphs: the embedded agent and a user's own compiled LangGraph graph, seen through the
 * few methods the in-process harness (embedded/harness.ts) and the thread repairs (repair.ts)
 * need.
 */
/** The part of a LangGraph state snapshot the harness reads. */
export interface StateSnapshotLike {
  values?: unknown;
  tasks?: ReadonlyArray<{ interrupts?: ReadonlyArray<{ id?: string; value?: unknown }> }>;
  createdAt?: string;
}

interface CompiledLike {
  stream(input: unknown, config?: unknown): Promise<AsyncIterable<unknown>>;
  getState(config: unknown): Promise<StateSnapshotLike>;
  updateState(config: unknown, values: unknown, asNode?: string): Promise<unknown>;
  nodes?: Record<string, unknown>;
  checkpointer?: unknown;
  /** The LangGraph store its nodes reach as `runtime.store`. */
  store?: unknown;
  /** A compiled graph's copy with more config (LangGraph's Pregel has it). */
  withConfig?(config: object): CompiledLike;
}

/** What the harness drives: a stream to run, state to read and repair. */
export interface LocalGraph {
  stream(input: unknown, config: unknown): Promise<AsyncIterable<unknown>>;
  getState(config: unknown): Promise<StateSnapshotLike>;
  updateState(config: unknown, values: unknown, asNode?: string): Promise<unknown>;
  /** Whether the graph has a node of this name (repairs are written as the `tools` node when there is one). */
  hasNode(name: string): boolean;
}

function isCompiled(value: unknown): value is CompiledLike {
  const v = value as Partial<CompiledLike> | null;
  return !!v && typeof v.stream === "function" && typeof v.getState === "function" && typeof v.updateState === "function";
}

/** The compiled graph behind a value: itself, or the `.graph` of a `createAgent` result. */
export function compiledOf(value: unknown): CompiledLike | undefined {
  const inner = (value as { graph?: unknown } | null)?.graph;
  if (isCompiled(inner)) return inner;
  return isCompiled(value) ? value : undefined;
}

/**
 * Wraps a compiled graph or a `createAgent` result. An agent keeps its own `stream` (it sets up
 * middleware state first); state is read and written on its compiled graph.
 */
export function toLocalGraph(value: unknown): LocalGraph | undefined {
  const compiled = compiledOf(value);
  if (!compiled) return undefined;
  const streamer = typeof (value as CompiledLike).stream === "function" ? (value as CompiledLike) : compiled;
  return {
    stream: (input, config) => streamer.stream(input, config),
    getState: (config) => compiled.getState(config),
    updateState: (config, values, asNode) => compiled.updateState(config, values, asNode),
    hasNode: (name) => !!compiled.nodes && name in compiled.nodes,
  };
}
