// The nested walk of the `flat` guard (module `flat.js`). `Array.prototype.flat` walks every
// array nested in what it is called on, down to its depth, in native code: each of them must
// pass the length check before the built-in starts. The walk is JavaScript so that the CPU limit
// stops it on a deep or cyclic receiver (`const c = [a]; c.push(c); c.flat(Infinity)`). The guard
// itself is native (guards.rs); this module is loaded into a context the first time a tool
// flattens an array, so an execution that never does pays nothing for it (compiled to bytecode
// once per process).
//
// By the time it loads, tool code has run and may have rewritten any built-in, so it calls none:
// only `checkArray`, a native function made for it.

let checkArray;

/** Sets the module up for one context; returns the walk. */
export function init(natives) {
    checkArray = natives.checkArray;
    return checkNested;
}

// Checks every array nested in `array` down to `depth` (`checkArray(value, name)` throws the
// guard's RangeError for an array too long, and answers whether `value` is an array at all).
function checkNested(array, depth, name) {
    for (let k = 0; k < array.length; k++) {
        const item = array[k];
        if (checkArray(item, name) && depth > 1) {
            checkNested(item, depth - 1, name);
        }
    }
}
