/**
 * Reading a child process's output by lines, for the fleet example.
 *
 * @module
 */

/** The lines of a child process's output, as they come. */
export async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffer = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    for (let at; (at = buffer.indexOf("\n")) >= 0; buffer = buffer.slice(at + 1)) {
      yield buffer.slice(0, at);
    }
  }
  if (buffer !== "") yield buffer;
}

/** The first line of a stream, trimmed; the rest of the stream is cancelled. */
export async function readLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  await reader.cancel();
  return text.trim();
}
