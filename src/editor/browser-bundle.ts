// Browser scripts from compiled modules: an entry module (compiled by tsc to CommonJS) and every module it
// imports joined into one file. Each module is wrapped in a function and gets a `require` that resolves its
// relative imports to the others; an import of anything else (a Node built-in, a package) fails the build,
// since the browser has none. The sidebar's tab and the live microphone page are made this way.
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

interface BundledModule {
  index: number;
  source: string;
  /** Each `require` specifier in the source, to the index of its module. */
  imports: Record<string, number>;
}

/** The browser script for the compiled entry module `entryFile` (a .js file under dist/), `banner` its first line. */
export function bundleBrowserScript(entryFile: string, banner: string): string {
  const modules = new Map<string, BundledModule>();
  const add = (file: string): number => {
    const known = modules.get(file);
    if (known) return known.index;
    const source = readFileSync(file, 'utf8').replace(/^\/\/# sourceMappingURL=.*$/m, '');
    const module: BundledModule = { index: modules.size, source, imports: {} };
    modules.set(file, module);
    for (const [, specifier] of source.matchAll(/\brequire\("([^"]+)"\)/g)) {
      if (!specifier.startsWith('.'))
        throw new Error(`${relative(process.cwd(), file)} imports "${specifier}", which the browser does not have`);
      module.imports[specifier] = add(`${resolve(dirname(file), specifier)}.js`);
    }
    return module.index;
  };
  add(resolve(entryFile));
  const factories = [...modules.entries()].map(
    ([file, module]) =>
      `  // ${relative(dirname(entryFile), file)}\n` +
      `  [${JSON.stringify(module.imports)}, function (require, module, exports) {\n${module.source}\n  }]`,
  );
  return [
    banner,
    '(function () {',
    "  'use strict';",
    '  var factories = [',
    factories.join(',\n'),
    '  ];',
    '  var loaded = [];',
    '  function load(index) {',
    '    if (!loaded[index]) {',
    '      var module = (loaded[index] = { exports: {} });',
    '      var imports = factories[index][0];',
    '      factories[index][1](function (specifier) { return load(imports[specifier]); }, module, module.exports);',
    '    }',
    '    return loaded[index].exports;',
    '  }',
    '  load(0);',
    '})();',
    '',
  ].join('\n');
}
