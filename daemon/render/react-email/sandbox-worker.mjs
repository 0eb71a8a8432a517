// Runs ONE tenant React Email template and exits. Plain JavaScript on purpose: a worker thread does not
// inherit tsx's loader when the daemon runs from bin/svc.js.
//
// Layers, because `vm` alone is not a security boundary:
//   1. each thread runs one template only, with resourceLimits and an empty env, and the parent
//      terminates it after the wall-clock limit (infinite loops, memory bombs);
//   2. the template runs in a fresh vm context whose only globals are the allowed modules, with code
//      generation from strings disabled (no eval / Function in the template's realm);
//   3. the objects it shares with this thread's realm (React, components) lead nowhere: the
//      constructors of this realm's functions are removed, stack-trace hooks are locked, and process
//      capabilities that reach files or native code are deleted before the template is evaluated;
//   4. memory outside the heap is closed in the template's realm and budgeted in this one (off-heap.mjs),
//      and this thread watches its own arrayBuffers as a backstop for any path those two miss.
import { parentPort, workerData } from 'node:worker_threads';
import vm from 'node:vm';
import * as React from 'react';
import * as jsxRuntime from 'react/jsx-runtime';
import * as components from '@react-email/components';
import { render } from '@react-email/render';
import { budgetThisRealm, closeTemplateRealm, createOffHeapBudget } from './off-heap.mjs';

const MAX_ERROR_CHARS = 300;
const { offHeapBytes, watchdogIntervalMs } = workerData;
const memoryUsage = process.memoryUsage.bind(process);

function describeError(error) {
  try {
    const message =
      error && typeof error === 'object' && typeof error.message === 'string' ? error.message : String(error);
    return message.slice(0, MAX_ERROR_CHARS);
  } catch {
    return 'the template threw a value that cannot be described';
  }
}

function hardenThisRealm() {
  const functionKinds = [
    Function,
    Object.getPrototypeOf(async function () {}).constructor,
    Object.getPrototypeOf(function* () {}).constructor,
    Object.getPrototypeOf(async function* () {}).constructor,
  ];
  for (const kind of functionKinds) {
    Object.defineProperty(kind.prototype, 'constructor', { value: undefined, writable: false, configurable: false });
  }
  // Error.prepareStackTrace hands out call sites, whose getThis()/getFunction() can leak this realm's global.
  Object.defineProperty(Error, 'prepareStackTrace', { value: undefined, writable: false, configurable: false });
  for (const name of [
    'getBuiltinModule',
    'binding',
    '_linkedBinding',
    'dlopen',
    'reallyExit',
    'kill',
    'chdir',
    'mainModule',
  ]) {
    try {
      delete process[name];
    } catch {
      // some are accessors on the prototype; the ones that matter are own properties
    }
  }
  delete globalThis.eval;
  // React's development warnings would otherwise be printed by the daemon on the tenant's behalf.
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace']) console[method] = () => {};
}

function allowedModules() {
  const modules = Object.create(null);
  modules['react'] = React;
  modules['react/jsx-runtime'] = jsxRuntime;
  modules['@react-email/components'] = components;
  return Object.freeze(modules);
}

async function renderTemplate({ code, propsJson, globalName }, budget) {
  const sandbox = Object.create(null);
  sandbox.__svcModules = allowedModules();
  sandbox.__svcPropsJson = propsJson;
  const context = vm.createContext(sandbox, {
    name: 'react-email-template',
    codeGeneration: { strings: false, wasm: false },
  });
  closeTemplateRealm(sandbox, vm.runInContext('globalThis', context), budget);
  // Props are parsed inside the template's realm so that they carry no objects from this one.
  const props = vm.runInContext('JSON.parse(__svcPropsJson)', context);
  vm.runInContext(code, context, { filename: 'template.jsx' });
  const exported = vm.runInContext(globalName, context);
  const component = exported && (exported.default ?? exported.Email);
  if (typeof component !== 'function') {
    return { ok: false, kind: 'no-component', message: 'The JSX must export a React component as its default export.' };
  }
  const html = await render(React.createElement(component, props));
  if (typeof html !== 'string') return { ok: false, kind: 'failed', message: 'The template did not render to HTML.' };
  return { ok: true, html };
}

// Resolve @react-email/render's lazy imports (react-dom/server) before the realm is hardened, then
// tell the parent this thread is ready for exactly one template.
await render(React.createElement('p', null, 'warm-up'));
hardenThisRealm();
const budget = createOffHeapBudget(offHeapBytes);
budgetThisRealm(budget);

// The backstop: whatever path allocated it, this isolate's ArrayBuffer memory past the budget ends the
// render. Checked while an asynchronous template waits and once more before answering.
const arrayBuffersAtStart = memoryUsage().arrayBuffers;
function overBudget() {
  const used = memoryUsage().arrayBuffers - arrayBuffersAtStart;
  if (used <= offHeapBytes) return null;
  return `The template holds ${Math.ceil(used / 1048576)} MB outside the JavaScript heap; a render may use at most ${offHeapBytes / 1048576} MB there.`;
}

let answered = false;
let watchdog;
function answer(result) {
  if (answered) return;
  answered = true;
  clearInterval(watchdog);
  const refusal = budget.refusal ?? overBudget();
  parentPort.postMessage(refusal ? { ok: false, kind: 'memory', message: refusal } : result);
}
parentPort.once('message', (job) => {
  watchdog = setInterval(() => {
    const refusal = overBudget();
    if (refusal) answer({ ok: false, kind: 'memory', message: refusal });
  }, watchdogIntervalMs);
  renderTemplate(job, budget).then(answer, (error) =>
    answer({ ok: false, kind: 'failed', message: describeError(error) }),
  );
});
parentPort.postMessage({ ready: true });
