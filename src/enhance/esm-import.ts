// The WebAssembly packages ship as ES modules. TypeScript compiles `import()` to `require()` for
// CommonJS output, which Node 20 before 20.19 cannot use on an ES module; a real import() can.
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- a Function body is the one place TypeScript leaves import() as written
export const importEsm = new Function('specifier', 'return import(specifier)') as <T>(specifier: string) => Promise<T>;
