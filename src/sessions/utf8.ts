/** UTF-8 helpers that never cut a character in two. */

/** Length of the longest prefix of `bytes` that ends on a character boundary. */
export function completePrefixLength(bytes: Buffer): number {
  // Look back at most 3 bytes for the start of an unfinished sequence.
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking
    // 0xF8–0xFF start no character: no byte to come can complete them.
    const needed = byte >= 0xf8 ? 1 : byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}
