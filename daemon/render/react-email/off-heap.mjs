// Memory outside the V8 heap for ONE render. resourceLimits bound the heap only; ArrayBuffers (and so every
// typed array, DataView and Buffer) and WebAssembly memories are allocated beside it, so a template could
// take the host's memory 256 MiB at a time. Two realms are involved and each is closed differently:
//   - the template's realm (the vm context) never needs binary data: its allocating globals are replaced
//     by constructors that refuse, so no instance of its own ArrayBuffer or typed arrays can ever exist and
//     their prototype methods (slice, transfer, resize…) have nothing to act on;
//   - this thread's realm, where React renders, does need a few small buffers (react-dom's 4 KiB views), and
//     the template can reach its objects: its allocating constructors, their `.constructor` links, their
//     allocating statics and the prototype methods that copy are replaced by versions that charge a budget
//     counted over the whole render (never given back, so allocate-and-drop loops are bounded too).
// Whatever slips past both (an allocation path not listed here) is caught by the watchdog: the worker
// measures its own arrayBuffers, and the daemon its RSS, and either ends the render (sandbox.ts).
const TYPED_ARRAY_NAMES = [
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float16Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
].filter((name) => typeof globalThis[name] === 'function');

/** Globals a template's realm loses: everything that allocates (or views) memory outside the heap. */
const TEMPLATE_REFUSED = [
  'ArrayBuffer',
  'SharedArrayBuffer',
  'DataView',
  'WebAssembly',
  'Atomics',
  ...TYPED_ARRAY_NAMES,
];

const MIB = 1024 * 1024;
const ArrayBufferOriginal = globalThis.ArrayBuffer;
const SharedArrayBufferOriginal = globalThis.SharedArrayBuffer;

/** A per-render budget of bytes outside the heap; `refusal` keeps the first refusal even if the template caught it. */
export function createOffHeapBudget(limitBytes) {
  let charged = 0;
  const budget = {
    limitBytes,
    refusal: null,
    get charged() {
      return charged;
    },
    refuse(sentence) {
      budget.refusal ??= sentence;
      return new RangeError(sentence);
    },
    charge(bytes, what) {
      const amount = Number.isFinite(bytes) && bytes > 0 ? Math.ceil(bytes) : 0;
      if (charged + amount > limitBytes) {
        throw budget.refuse(
          `The template asked for ${Math.ceil(amount / MIB)} MB more outside the JavaScript heap (${what}); a render may use at most ${limitBytes / MIB} MB there.`,
        );
      }
      charged += amount;
    },
  };
  return budget;
}

/** Replaces the template realm's allocating globals with constructors that refuse (and record the refusal). */
export function closeTemplateRealm(context, contextGlobal, budget) {
  for (const name of TEMPLATE_REFUSED) {
    // Deleting through the contextified global removes the builtin from the context's real global; the
    // refusing stand-in is then non-configurable, so the template cannot delete it to uncover anything.
    Reflect.deleteProperty(contextGlobal, name);
    // Every operation on the stand-in refuses: calling or constructing it, `extends` (which reads its
    // prototype), and reaching a static such as `Uint8Array.from` or `WebAssembly.Memory`.
    const refuse = () => {
      throw budget.refuse(
        `Templates cannot allocate binary data (${name}): a render may use at most ${budget.limitBytes / MIB} MB outside the JavaScript heap.`,
      );
    };
    const standIn = new Proxy(function () {}, new Proxy({}, { get: () => refuse }));
    Object.defineProperty(context, name, { value: standIn, writable: false, enumerable: false, configurable: false });
  }
}

function toIndex(value) {
  const number = Number(value);
  return Number.isFinite(number) && number > 0 ? Math.floor(number) : 0;
}

/** Bytes a constructor call is about to allocate, read from its arguments before it runs. */
function requestedBytes(name, bytesPerElement, args) {
  const [first, second] = args;
  if (name === 'ArrayBuffer' || name === 'SharedArrayBuffer') {
    const max = second !== null && typeof second === 'object' ? toIndex(second.maxByteLength) : 0;
    return Math.max(toIndex(first), max);
  }
  if (first === null || first === undefined) return 0;
  if (typeof first !== 'object' && typeof first !== 'function') return toIndex(first) * bytesPerElement;
  if (first instanceof ArrayBufferOriginal || first instanceof SharedArrayBufferOriginal) return 0; // a view
  return toIndex(first.length) * bytesPerElement;
}

/** Charges `result`'s bytes after a call that copies (its source was already paid for, so it is bounded). */
function chargeResult(budget, what, result) {
  const bytes = result && typeof result === 'object' && typeof result.byteLength === 'number' ? result.byteLength : 0;
  budget.charge(bytes, what);
  return result;
}

function wrapMethod(owner, key, budget, label, precharge) {
  const original = owner[key];
  if (typeof original !== 'function') return;
  const wrapped = {
    [key](...args) {
      if (precharge) budget.charge(precharge(this, args), label);
      const result = Reflect.apply(original, this, args);
      return precharge ? result : chargeResult(budget, label, result);
    },
  }[key];
  Object.defineProperty(owner, key, { value: wrapped, writable: false, enumerable: false, configurable: false });
}

/**
 * Puts this thread's allocating constructors behind `budget`: the globals, the `.constructor` of their
 * prototypes (how a template reaches them from an instance it is handed), Buffer's statics, and the
 * prototype methods that allocate a copy. Called after the warm-up render, right before the template runs.
 */
export function budgetThisRealm(budget) {
  const wrappers = new Map();
  const wrap = (name) => {
    const original = globalThis[name];
    const bytesPerElement = original.BYTES_PER_ELEMENT ?? 1;
    const proxy = new Proxy(original, {
      construct(target, args, newTarget) {
        budget.charge(requestedBytes(name, bytesPerElement, args), `new ${name}`);
        return Reflect.construct(target, args, newTarget === proxy ? target : newTarget);
      },
      apply(target, thisArgument, args) {
        // Buffer(n) without new (deprecated) allocates; the others throw without new.
        budget.charge(requestedBytes(name, bytesPerElement, args), name);
        return Reflect.apply(target, thisArgument, args);
      },
      getPrototypeOf(target) {
        const parent = Reflect.getPrototypeOf(target);
        return wrappers.get(parent) ?? parent; // Buffer's parent is Uint8Array
      },
    });
    wrappers.set(original, proxy);
    Object.defineProperty(original.prototype, 'constructor', {
      value: proxy,
      writable: false,
      enumerable: false,
      configurable: false,
    });
    Object.defineProperty(globalThis, name, { value: proxy, writable: false, enumerable: false, configurable: false });
  };
  for (const name of ['ArrayBuffer', 'SharedArrayBuffer', ...TYPED_ARRAY_NAMES]) wrap(name);

  const NodeBuffer = globalThis.Buffer;
  if (typeof NodeBuffer === 'function') {
    for (const key of ['alloc', 'allocUnsafe', 'allocUnsafeSlow'])
      wrapMethod(NodeBuffer, key, budget, `Buffer.${key}`, (_, [size]) => toIndex(size));
    wrapMethod(NodeBuffer, 'concat', budget, 'Buffer.concat', (_, [list, total]) =>
      total !== undefined
        ? toIndex(total)
        : Array.isArray(list)
          ? list.reduce((sum, item) => sum + toIndex(item?.length), 0)
          : 0,
    );
    for (const key of ['from', 'copyBytesFrom']) wrapMethod(NodeBuffer, key, budget, `Buffer.${key}`);
    wrap('Buffer');
  }

  // Copies made from an existing buffer allocate without any constructor being looked up.
  for (const key of ['slice', 'transfer', 'transferToFixedLength']) {
    const precharge =
      key === 'slice' ? undefined : (self, [length]) => (length === undefined ? self.byteLength : toIndex(length));
    wrapMethod(ArrayBufferOriginal.prototype, key, budget, `ArrayBuffer.prototype.${key}`, precharge);
  }
  wrapMethod(SharedArrayBufferOriginal.prototype, 'slice', budget, 'SharedArrayBuffer.prototype.slice');
  const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
  for (const key of ['slice', 'map', 'filter', 'toReversed', 'toSorted', 'with']) {
    wrapMethod(TypedArrayPrototype, key, budget, `TypedArray.prototype.${key}`);
  }
  // Nothing in a render compiles WebAssembly; its memories grow outside every other account.
  delete globalThis.WebAssembly;
}
