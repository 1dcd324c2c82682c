import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { onnx } from 'onnx-proto';
import { deriveStatefulGraph, GRAPHS, sha256, statefulFile } from '../../scripts/dfn-stateful-graphs';
import { MODEL_DIR } from '../../src/enhance/dfn-model';

const read = (file: string) => readFileSync(join(MODEL_DIR, file));

/** Every weight of a graph, by name: its initializers and the tensors its Constant nodes hold, as bytes. */
function weights(bytes: Uint8Array): Map<string, Buffer> {
  const graph = onnx.ModelProto.decode(bytes).graph!;
  const out = new Map<string, Buffer>();
  const bytesOf = (tensor: onnx.ITensorProto) =>
    Buffer.from(tensor.rawData?.length ? tensor.rawData : onnx.TensorProto.encode(tensor).finish());
  for (const tensor of graph.initializer!) out.set(tensor.name!, bytesOf(tensor));
  for (const node of graph.node!)
    if (node.opType === 'Constant')
      out.set(node.output![0], bytesOf(node.attribute!.find((a) => a.name === 'value')!.t!));
  return out;
}

describe('enhance: the stateful graphs (scripts/dfn-stateful-graphs.ts)', () => {
  for (const graph of Object.keys(GRAPHS)) {
    it(`${graph}: the script run again gives the checked-in ${statefulFile(graph)} byte for byte, sha256 as the notice says`, () => {
      const derived = deriveStatefulGraph(graph, read(`${graph}.onnx`));
      const checkedIn = read(statefulFile(graph));
      assert.ok(Buffer.from(derived).equals(checkedIn), `${statefulFile(graph)} differs from the script's output`);
      const notice = read('README.md').toString();
      assert.ok(notice.includes(`\`${statefulFile(graph)}\` ${sha256(checkedIn)}`), 'sha256 in the notice of origin');
    });

    it(`${graph}: keeps every weight the network uses byte for byte`, () => {
      const shipped = weights(read(`${graph}.onnx`));
      const derived = weights(read(statefulFile(graph)));
      let compared = 0;
      for (const [name, bytes] of derived) {
        if (!shipped.has(name)) continue; // the script's own slice bounds
        assert.ok(bytes.equals(shipped.get(name)!), `${name} changed`);
        compared++;
      }
      const large = [...shipped].filter(([, bytes]) => bytes.length >= 1024);
      for (const [name] of large) assert.ok(derived.has(name), `${name} left out`);
      assert.ok(compared >= large.length && large.length > 0);
    });
  }

  it('turns every GRU and time pad into state: 3 states in enc, 2 in erb_dec, 3 in df_dec, each an input and an output', () => {
    const states = Object.keys(GRAPHS).map((graph) => {
      const model = onnx.ModelProto.decode(read(statefulFile(graph))).graph!;
      const ins = model.input!.map((i) => i.name!).filter((n) => n.endsWith('.in'));
      const outs = model.output!.map((o) => o.name!).filter((n) => n.endsWith('.out'));
      assert.deepEqual(outs.map((n) => n.replace(/\.out$/, '')).sort(), ins.map((n) => n.replace(/\.in$/, '')).sort());
      assert.equal(model.node!.filter((n) => n.opType === 'Pad').length, 0, `${graph}: no Pad left`);
      return ins.length;
    });
    assert.deepEqual(states, [3, 2, 3]);
  });

  it('refuses a graph holding a time pad it does not know', () => {
    const model = onnx.ModelProto.decode(read('enc.onnx'));
    model.graph!.node!.find((n) => n.opType === 'Pad')!.name = '/other/Pad';
    assert.throws(
      () => deriveStatefulGraph('enc', onnx.ModelProto.encode(model).finish()),
      /not the ones this script knows/,
    );
  });
});
