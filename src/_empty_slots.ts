// An array of empty slots, for the tables and rings that hold entries by
// index (the fifo wait line's ring, a batch's live items).

/** `count` slots holding undefined. */
export function emptySlots<T>(count: number): (T | undefined)[] {
  // Allocated at its size at once (no garbage from growing it by pushes), and
  // filled by stores: after the first few arrays, V8's allocation site then
  // makes it with the elements kind the entries need (`fill` made a second
  // copy at the first entry's store, every time).
  const slots = new Array<T | undefined>(count);
  for (let i = 0; i < count; i++) slots[i] = undefined;
  return slots;
}
