import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { onnx } from 'onnx-proto';
import {
  deriveStatefulGraph,
  GRAPHS,
  joinedName,
  sha256,
  STATEFUL_FILE,
  statefulGraph,
} from '../../scripts/dfn-stateful-graphs';
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

describe('enhance: the stateful graph (scripts/dfn-stateful-graphs.ts)', () => {
  it(`the script run again gives the checked-in ${STATEFUL_FILE} byte for byte, sha256 as the notice says`, () => {
    const checkedIn = read(STATEFUL_FILE);
    assert.ok(
      Buffer.from(statefulGraph(MODEL_DIR)).equals(checkedIn),
      `${STATEFUL_FILE} differs from the script's output`,
    );
    const notice = read('README.md').toString();
    assert.ok(notice.includes(`\`${STATEFUL_FILE}\` ${sha256(checkedIn)}`), 'sha256 in the notice of origin');
  });

  for (const graph of Object.keys(GRAPHS)) {
    it(`${graph}: keeps every weight the network uses byte for byte`, () => {
      const shipped = weights(read(`${graph}.onnx`));
      const joined = weights(read(STATEFUL_FILE));
      let compared = 0;
      for (const [name, bytes] of shipped) {
        const kept = joined.get(joinedName(graph, name));
        if (!kept) {
          assert.ok(bytes.length < 1024, `${name} left out`); // only the zero-state builders go
          continue;
        }
        assert.ok(kept.equals(bytes), `${name} changed`);
        compared++;
      }
      assert.ok(compared > 0);
    });
  }

  it('turns every GRU and time pad into state: 3 states from enc, 2 from erb_dec, 3 from df_dec, each an input and an output', () => {
    const model = onnx.ModelProto.decode(read(STATEFUL_FILE)).graph!;
    const ins = model.input!.map((i) => i.name!).filter((n) => n.endsWith('.in'));
    const outs = model.output!.map((o) => o.name!).filter((n) => n.endsWith('.out'));
    assert.deepEqual(outs.map((n) => n.replace(/\.out$/, '')).sort(), ins.map((n) => n.replace(/\.in$/, '')).sort());
    assert.equal(model.node!.filter((n) => n.opType === 'Pad').length, 0, 'no Pad left');
    const states = Object.keys(GRAPHS).map((graph) => ins.filter((n) => n.startsWith(`${graph}.`)).length);
    assert.deepEqual(states, [3, 2, 3]);
    assert.deepEqual(
      model.input!.map((i) => i.name).filter((n) => !n!.endsWith('.in')),
      ['feat_erb', 'feat_spec'],
      "the encoder's outputs pass to the decoders inside the graph",
    );
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
