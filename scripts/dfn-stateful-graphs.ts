// Derives stateful forms of DeepFilterNet3's three graphs (models/deepfilternet3: enc, erb_dec, df_dec)
// so that the network can run a few frames at a time and give exactly what one run over the whole
// sequence gives. Only two kinds of op look back in time:
//   - ONNX GRU: its initial hidden state (zeros in the shipped graphs) becomes an input `<state>.in`, and
//     its last hidden state (Y_h) an output `<state>.out`;
//   - a Pad of k zero frames before a convolution with a kernel of k + 1 frames: the Pad becomes a
//     Concat of the k frames before (input `<state>.in`) with the new frames, and the last k frames of
//     that Concat are the output `<state>.out`.
// A state starts at zeros: the first chunk then sees what the shipped graphs see at the sequence's start.
// Each grouped linear layer, an Einsum `btgi,gih->btgh` over a weight, becomes the same product as a
// MatMul between two Transposes (the weight the same tensor, byte for byte): onnxruntime's Einsum folds
// the batch into the rows of one product, which then sums in another order for a batch than for one
// signal alone; the MatMul multiplies each signal's frames on their own, so that a signal's outputs in a
// batch are bit-identical to its outputs alone. (Its speed is the Einsum's, within the noise.)
// The batch axis of every input and output is left free (`B`): several signals, each with its own state,
// run in one call, each giving exactly what it gives alone. A run's cost at one or two frames is mostly
// reading the GRUs' 8 MB of weights, which a batch reads once for all its signals.
// Nodes no output needs any more (the zero-state builders) are left out. Every other op works within
// one frame and is copied as it is, its weights byte for byte.
//
// The three stateful graphs are then joined into one (STATEFUL_FILE): the encoder's outputs feed the two
// decoders inside the graph, so a run is one call with one copy in and out, not three calls that each
// copy the encoder's activations (about 4 MB per 100 frames) out to JavaScript and back in.
//
// Usage: node dist/scripts/dfn-stateful-graphs.js [model folder]  (default: models/deepfilternet3)
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { onnx } from 'onnx-proto';

/** The shipped graphs and, per graph, the time pads it holds (the script refuses a graph holding others). */
export const GRAPHS: Record<string, { timePads: Record<string, number>; grus: number }> = {
  enc: { timePads: { '/erb_conv0/0/Pad': 2, '/df_conv0/0/Pad': 2 }, grus: 1 },
  erb_dec: { timePads: {}, grus: 2 },
  df_dec: { timePads: { '/df_convp/df_convp.0/Pad': 4 }, grus: 2 },
};

/** The file the joined stateful graph is written to, beside the shipped ones. */
export const STATEFUL_FILE = 'dfn3_stateful.onnx';

/** The values the graphs pass to one another (the encoder's outputs), inside the joined graph. */
const PASSED_ON = ['e0', 'e1', 'e2', 'e3', 'emb', 'c0'];
/** The values the joined graph is fed and gives that keep their names: features, results, states. */
const OUTER = new Set(['feat_erb', 'feat_spec', 'lsnr', 'm', 'coefs', ...PASSED_ON]);

const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;
const INT64_MAX = 0x7fffffffffffffffn;

/**
 * A state's name: the graph's, then the node's scope ('df_dec', '/df_gru/gru/GRU_1' -> 'df_dec.df_gru.gru.GRU_1';
 * a Pad is named by its convolution: '/erb_conv0/0/Pad' -> 'enc.erb_conv0'). Unique across the three graphs,
 * which share a session's worth of states per signal.
 */
const stateName = (graph: string, nodeName: string) =>
  `${graph}.${nodeName
    .replace(/^\//, '')
    .replace(/\/[^/]*\/Pad$/, '')
    .replaceAll('/', '.')}`;

function int64Tensor(name: string, values: bigint[]): onnx.TensorProto {
  const raw = Buffer.alloc(8 * values.length);
  values.forEach((value, i) => raw.writeBigInt64LE(value, 8 * i));
  return onnx.TensorProto.create({ name, dataType: INT64, dims: [values.length], rawData: raw });
}

function floatInput(name: string, dims: number[]): onnx.ValueInfoProto {
  return onnx.ValueInfoProto.create({
    name,
    type: { tensorType: { elemType: FLOAT, shape: { dim: dims.map((dimValue) => ({ dimValue })) } } },
  });
}

/** The int64 values of the tensor a Constant node holds. */
function constantInts(node: onnx.INodeProto): bigint[] {
  const tensor = node.attribute?.find((a) => a.name === 'value')?.t;
  if (!tensor) throw new Error(`${node.name}: a Constant without a value`);
  if (tensor.rawData?.length) {
    const raw = Buffer.from(tensor.rawData);
    return Array.from({ length: raw.length / 8 }, (_, i) => raw.readBigInt64LE(8 * i));
  }
  return (tensor.int64Data ?? []).map((v) => BigInt(String(v)));
}

function constantFloat(node: onnx.INodeProto): number {
  const tensor = node.attribute?.find((a) => a.name === 'value')?.t;
  if (tensor?.rawData?.length === 4) return Buffer.from(tensor.rawData).readFloatLE(0);
  if (tensor?.floatData?.length === 1) return tensor.floatData[0];
  throw new Error(`${node.name}: not a float scalar`);
}

/** The stateful form of one shipped graph (its file's bytes in, the derived file's bytes out). */
export function deriveStatefulGraph(graphName: string, shipped: Uint8Array): Uint8Array {
  const plan = GRAPHS[graphName];
  if (!plan) throw new Error(`unknown graph ${graphName}`);
  const model = onnx.ModelProto.decode(shipped);
  const graph = model.graph!;
  const nodes = graph.node!;
  const byName = new Map(nodes.map((node) => [node.name!, node]));
  const consumers = (value: string) => nodes.filter((node) => node.input?.includes(value));
  const newInputs: onnx.ValueInfoProto[] = [];
  const newOutputs: onnx.ValueInfoProto[] = [];
  const newNodes: onnx.NodeProto[] = [];

  const pads = nodes.filter((node) => node.opType === 'Pad');
  const grus = nodes.filter((node) => node.opType === 'GRU');
  const padNames = pads.map((node) => node.name).sort();
  if (JSON.stringify(padNames) !== JSON.stringify(Object.keys(plan.timePads).sort()))
    throw new Error(`${graphName}: Pads ${padNames.join(', ')} are not the ones this script knows`);
  if (grus.length !== plan.grus) throw new Error(`${graphName}: ${grus.length} GRUs, expected ${plan.grus}`);

  for (const pad of pads) {
    const frames = plan.timePads[pad.name!];
    const scope = pad.name!.slice(0, pad.name!.lastIndexOf('/'));
    // The pads (torch order, last axis first: freq before/after, time before/after) and the fill value.
    const padding = constantInts(byName.get(`${scope}/Constant_1`)!);
    if (padding.join() !== `0,0,${frames},0`) throw new Error(`${pad.name}: pads ${padding.join()}`);
    if (pad.input![2] !== `${scope}/Constant_8_output_0` || constantFloat(byName.get(`${scope}/Constant_8`)!) !== 0)
      throw new Error(`${pad.name}: not a zero pad`);
    const data = pad.input![0];
    const source = graph.input!.find((input) => input.name === data);
    if (!source) throw new Error(`${pad.name}: pads ${data}, not a graph input`);
    const dims = source.type!.tensorType!.shape!.dim!.map((dim) => Number(dim.dimValue ?? 0));
    const name = stateName(graphName, pad.name!);
    const stateDims = [1, dims[1], frames, dims[3]];
    newInputs.push(floatInput(`${name}.in`, stateDims));
    newOutputs.push(floatInput(`${name}.out`, stateDims));
    // In place of the Pad: the frames before, then the new ones; its output name is kept.
    Object.assign(pad, {
      opType: 'Concat',
      input: [`${name}.in`, data],
      attribute: [onnx.AttributeProto.create({ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 2 })],
    });
    graph.initializer!.push(
      int64Tensor(`${name}.starts`, [BigInt(-frames)]),
      int64Tensor(`${name}.ends`, [INT64_MAX]),
      int64Tensor(`${name}.axes`, [2n]),
    );
    newNodes.push(
      onnx.NodeProto.create({
        name: `${scope}/NextState`,
        opType: 'Slice',
        input: [pad.output![0], `${name}.starts`, `${name}.ends`, `${name}.axes`],
        output: [`${name}.out`],
      }),
    );
  }

  for (const gru of grus) {
    const hidden = Number(gru.attribute!.find((a) => a.name === 'hidden_size')!.i);
    const direction = gru.attribute!.find((a) => a.name === 'direction');
    if (direction && Buffer.from(direction.s!).toString() !== 'forward') throw new Error(`${gru.name}: not forward`);
    const name = stateName(graphName, gru.name!);
    const stateDims = [1, 1, hidden];
    newInputs.push(floatInput(`${name}.in`, stateDims));
    newOutputs.push(floatInput(`${name}.out`, stateDims));
    while (gru.input!.length < 6) gru.input!.push('');
    gru.input![5] = `${name}.in`;
    const lastHidden = gru.output![1];
    if (lastHidden && consumers(lastHidden).length > 0) throw new Error(`${gru.name}: its Y_h is used`);
    gru.output![1] = `${name}.out`;
  }

  for (const einsum of nodes.filter((node) => node.opType === 'Einsum')) groupedLinearAsMatMul(graph, einsum);

  graph.node = [...nodes, ...newNodes];
  graph.input = [...graph.input!, ...newInputs];
  graph.output = [...graph.output!, ...newOutputs];
  pruneUnneeded(graph);
  for (const value of [...graph.input, ...graph.output]) freeBatchAxis(value);
  return onnx.ModelProto.encode(model).finish();
}

/** The axis that counts signals: 1 in a GRU's hidden state (directions, batch, hidden), else 0. */
const batchAxis = (name: string) => (/\.GRU(_\d+)?\.(in|out)$/.test(name) ? 1 : 0);

/** Names a graph input's or output's batch axis `B`, free (it was 1, or free under another name). */
function freeBatchAxis(value: onnx.IValueInfoProto): void {
  const dims = value.type!.tensorType!.shape!.dim!;
  const axis = batchAxis(value.name!);
  if (dims[axis].dimParam === undefined && Number(dims[axis].dimValue) !== 1)
    throw new Error(`${value.name}: a batch of ${dims[axis].dimValue}, expected 1`);
  dims[axis] = onnx.TensorShapeProto.Dimension.create({ dimParam: 'B' });
}

/** The grouped linear Einsum (x: b,t,g,i; weight g,i,h) as Transpose (b,g,t,i), MatMul (b,g,t,h), Transpose back. */
function groupedLinearAsMatMul(graph: onnx.IGraphProto, einsum: onnx.INodeProto): void {
  const equation = Buffer.from(einsum.attribute!.find((a) => a.name === 'equation')!.s!).toString();
  const [x, weight] = einsum.input!;
  const dims = graph.initializer!.find((tensor) => tensor.name === weight)?.dims;
  if (equation !== 'btgi,gih->btgh' || dims?.length !== 3)
    throw new Error(
      `${einsum.name}: Einsum ${equation} over ${weight} is not a grouped linear layer this script knows`,
    );
  const output = einsum.output![0];
  const swap = (name: string, input: string, out: string) =>
    onnx.NodeProto.create({
      name,
      opType: 'Transpose',
      input: [input],
      output: [out],
      attribute: [
        onnx.AttributeProto.create({ name: 'perm', type: onnx.AttributeProto.AttributeType.INTS, ints: [0, 2, 1, 3] }),
      ],
    });
  const nodes = graph.node!;
  nodes.splice(
    nodes.indexOf(einsum),
    1,
    swap(`${einsum.name}/GroupsFirst`, x, `${output}/groups_first`),
    onnx.NodeProto.create({
      name: `${einsum.name}/MatMul`,
      opType: 'MatMul',
      input: [`${output}/groups_first`, weight],
      output: [`${output}/by_group`],
    }),
    swap(`${einsum.name}/FramesFirst`, `${output}/by_group`, output),
  );
}

/** Leaves out nodes no output needs, and the initializers and value infos of values left unused. */
function pruneUnneeded(graph: onnx.IGraphProto): void {
  const needed = new Set(graph.output!.map((output) => output.name!));
  const kept: onnx.INodeProto[] = [];
  for (const node of [...graph.node!].reverse()) {
    if (!node.output!.some((output) => needed.has(output))) continue;
    kept.push(node);
    for (const input of node.input!) if (input) needed.add(input);
  }
  graph.node = kept.reverse();
  graph.initializer = graph.initializer!.filter((tensor) => needed.has(tensor.name!));
  graph.valueInfo = (graph.valueInfo ?? []).filter((info) => needed.has(info.name!));
}

/**
 * A name inside the joined graph: the passed-on values, features, results and states keep theirs
 * (states already carry their graph's name); every other value, weight and node is put under its
 * graph's name ('/Concat_output_0' in erb_dec -> 'erb_dec/Concat_output_0'), as the three graphs reuse them.
 */
export const joinedName = (graph: string, name: string) =>
  name === '' || OUTER.has(name) || name.startsWith(`${graph}.`)
    ? name
    : `${graph}${name.startsWith('/') ? '' : '/'}${name}`;

/** The three stateful graphs (bytes, by graph) as one: the decoders take the encoder's outputs within it. */
export function joinStatefulGraphs(derived: Record<string, Uint8Array>): Uint8Array {
  const models = Object.keys(GRAPHS).map((graph) => ({ graph, model: onnx.ModelProto.decode(derived[graph]) }));
  const joined = onnx.GraphProto.create({ name: 'dfn3_stateful', node: [], initializer: [], valueInfo: [] });
  for (const { graph, model } of models) {
    const part = model.graph!;
    if (model.opsetImport.length !== 1 || Number(model.opsetImport[0].version) !== 12)
      throw new Error(`${graph}: opset ${JSON.stringify(model.opsetImport)}, not ONNX 12 alone`);
    const rename = (name: string) => joinedName(graph, name);
    for (const node of part.node!) {
      node.name = rename(node.name!);
      node.input = node.input!.map(rename);
      node.output = node.output!.map(rename);
      joined.node.push(node);
    }
    for (const value of [...part.initializer!, ...(part.valueInfo ?? [])]) value.name = rename(value.name!);
    joined.initializer.push(...(part.initializer! as onnx.TensorProto[]));
    joined.valueInfo.push(...((part.valueInfo ?? []) as onnx.ValueInfoProto[]));
    joined.input.push(...(part.input!.filter((i) => !PASSED_ON.includes(i.name!)) as onnx.ValueInfoProto[]));
    joined.output.push(...(part.output!.filter((o) => !PASSED_ON.includes(o.name!)) as onnx.ValueInfoProto[]));
  }
  const names = joined.node.map((node) => node.name);
  if (new Set(names).size !== names.length) throw new Error('two nodes of the joined graph share a name');
  // The encoder's model around the joined graph: its IR version, opset and producer.
  const model = models[0].model;
  model.graph = joined;
  return onnx.ModelProto.encode(model).finish();
}

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The joined stateful graph of the shipped graphs in `dir`. */
export function statefulGraph(dir: string): Uint8Array {
  const derived: Record<string, Uint8Array> = {};
  for (const graph of Object.keys(GRAPHS))
    derived[graph] = deriveStatefulGraph(graph, readFileSync(join(dir, `${graph}.onnx`)));
  return joinStatefulGraphs(derived);
}

/** Reads the shipped graphs in `dir` and writes the joined stateful graph beside them; returns its sha256. */
export function writeStatefulGraph(dir: string): string {
  const bytes = statefulGraph(dir);
  writeFileSync(join(dir, STATEFUL_FILE), bytes);
  return sha256(bytes);
}

if (require.main === module) {
  const dir = process.argv[2] ?? join(__dirname, '..', '..', 'models', 'deepfilternet3');
  console.log(`${STATEFUL_FILE} ${writeStatefulGraph(dir)}`);
}
