// The example flows as files: what Import > Examples offers and what npm start deploys.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { exampleFlows, mergeFlows, type FlowNode } from '../../scripts/example-flows';

const EXAMPLES = join(__dirname, '..', '..', '..', 'examples');
const CORE_TYPES = new Set(['comment', 'inject', 'debug', 'catch', 'switch', 'change', 'trigger', 'delay', 'function', 'watch', 'file in', 'http in', 'http response']);

describe('example flows', () => {
  const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.json'));

  it('are five, each explained by a comment node, using only core nodes and ours', () => {
    assert.equal(files.length, 5);
    for (const file of files) {
      const nodes = JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8')) as FlowNode[];
      assert.ok(nodes.some((n) => n.type === 'comment' && typeof n.info === 'string' && n.info.length > 100), `${file} has a comment that explains it`);
      for (const node of nodes) assert.ok(CORE_TYPES.has(node.type) || node.type.startsWith('media-enhance-'), `${file}: ${node.type}`);
      const ids = nodes.map((n) => n.id);
      assert.equal(new Set(ids).size, ids.length, `${file}: unique ids`);
      for (const node of nodes) {
        for (const output of (node.wires as string[][] | undefined) ?? []) for (const target of output) assert.ok(ids.includes(target), `${file}: ${node.id} is wired to ${target}, which exists`);
      }
    }
  });

  it('deploy twice without a duplicate, keeping the flows a user added', () => {
    const own: FlowNode[] = [{ id: 'my-tab', type: 'tab', label: 'mine' }, { id: 'my-inject', type: 'inject', z: 'my-tab' }];
    const once = mergeFlows(own, exampleFlows(EXAMPLES));
    const twice = mergeFlows(once, exampleFlows(EXAMPLES));
    assert.deepEqual(twice, once);
    assert.equal(once.filter((n) => n.type === 'tab').length, 6);
    assert.equal(once.filter((n) => n.type === 'media-enhance-config').length, 1, 'one built-in engine shared by every example');
    assert.ok(once.some((n) => n.id === 'my-inject'));
  });
});
