// Which node each entry of Node-RED's deploy warning names, without a browser: the entries are read as
// Node-RED writes them ("[tab] label (type)", deploy.js), with nodes that read alike, a subflow, disabled
// nodes and the "plus N more" line that ends a long list.
import assert from 'node:assert/strict';
import {
  invalidNodes,
  isOwnType,
  listedAs,
  nodesOfEntries,
  type EditorNode,
  type RedForDeployWarning,
} from '../../src/editor/sidebar/deploy-reasons';

/** A stand-in for the editor's RED: tabs, a subflow, config nodes and flow nodes, labelled by name. */
function editorWith(configs: EditorNode[], nodes: (EditorNode & { name?: string })[]): RedForDeployWarning {
  const tabs: Record<string, { label: string; disabled?: boolean }> = {
    t1: { label: 'Podcasts' },
    t2: { label: 'Old', disabled: true },
  };
  return {
    nodes: {
      eachConfig: (visit) => configs.forEach(visit),
      eachNode: (visit) => nodes.forEach(visit),
      workspace: (id) => tabs[id],
      subflow: (id) => (id === 's1' ? { name: 'Normalise' } : undefined),
    },
    utils: { getNodeLabel: (node, id) => (node as { name?: string }).name || id },
  };
}

describe("the deploy warning's entries and the nodes they name", () => {
  const config: EditorNode = { id: 'c1', type: 'media-enhance-config', valid: false };
  const first = { id: 'n1', type: 'media-enhance-file', z: 't1', name: 'show', valid: false };
  const valid = { id: 'n2', type: 'media-enhance-file', z: 't1', name: 'show', valid: true };
  const second = { id: 'n3', type: 'media-enhance-file', z: 't1', name: 'show', valid: false };
  const disabled = { id: 'n4', type: 'media-enhance-file', z: 't1', name: 'off', valid: false, d: true };
  const onDisabledTab = { id: 'n5', type: 'media-enhance-upload', z: 't2', valid: false };
  const inSubflow = { id: 'n6', type: 'media-enhance-upload', z: 's1', name: 'up', valid: false };
  const red = editorWith([config], [first, valid, second, disabled, onDisabledTab, inSubflow]);

  it('lists the invalid nodes Node-RED lists, config nodes first, as it names them', () => {
    const nodes = invalidNodes(red);
    assert.deepEqual(
      nodes.map((node) => node.id),
      ['c1', 'n1', 'n3', 'n6'],
    );
    assert.deepEqual(
      nodes.map((node) => listedAs(red, node)),
      [
        'c1 (media-enhance-config)',
        '[Podcasts] show (media-enhance-file)',
        '[Podcasts] show (media-enhance-file)',
        '[Normalise] up (media-enhance-upload)',
      ],
    );
  });

  it('gives the n-th entry that reads alike the n-th such node, and "plus N more" none', () => {
    const nodes = invalidNodes(red);
    const listed = nodes.map((node) => listedAs(red, node));
    // Node-RED's order: sorted by tab, then type, stable among the rest.
    const entries = [
      'c1 (media-enhance-config)',
      '[Normalise] up (media-enhance-upload)',
      '[Podcasts] show (media-enhance-file)',
      '[Podcasts] show (media-enhance-file)',
      'plus 1 more',
    ];
    assert.deepEqual(
      nodesOfEntries(entries, listed, nodes).map((node) => node?.id ?? null),
      ['c1', 'n6', 'n1', 'n3', null],
    );
  });

  it("explains only this package's nodes", () => {
    assert.equal(isOwnType('media-enhance-file'), true);
    assert.equal(isOwnType('function'), false);
  });
});
