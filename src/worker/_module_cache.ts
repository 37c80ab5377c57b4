// The script modules a worker has imported, kept for its later runs.

const modules = new Map<string, Promise<Record<string, unknown>>>();
const loadedModules = new Map<string, Record<string, unknown>>();

/** Modules already loaded: a warm worker's next run starts without waiting. */
export const loaded: ReadonlyMap<string, Record<string, unknown>> = loadedModules;

/** The module at `url`, imported once (again after a failure: a file being written). */
export function loadModule(url: string): Promise<Record<string, unknown>> {
  let module = modules.get(url);
  if (module === undefined) {
    module = import(url);
    modules.set(url, module);
    module.then((namespace) => loadedModules.set(url, namespace), () => {});
    module.catch(() => modules.delete(url));
  }
  return module;
}
