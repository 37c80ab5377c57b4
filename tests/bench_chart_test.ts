// The benchmark chart is drawn from the Markdown tables bench:peers prints.
import { assert, assertEquals } from "@std/assert";
import { parseTables, renderChart } from "../bench/_chart.ts";

const MARKDOWN = `
| implementation | N | median ms | tasks/s | vs p-limit |
| --- | --: | --: | --: | --: |
| procpool forkAll | 200,000 | 152.5 | 1,311,808 | 4.32× |
| p-limit & co | 200,000 | 658.6 | 303,668 | 1.00× |

| 1,000,000 tasks queued behind 8 | peak RSS MB | heap B/task | heap B/task above floor |
| --- | --: | --: | --: |
| floor | 271 | 160 | — |
| procpool forkProcess | 1,041 | 504 | 344 |
| p-limit | 1,032 | 816 | 656 |
`;

Deno.test("bench chart: the throughput and memory tables become bars", async (t) => {
  const data = parseTables(MARKDOWN);

  await t.step("reads tasks/s and the bytes above the floor, skipping the floor", () => {
    assertEquals(data.throughput, [
      { label: "procpool forkAll", value: 1_311_808 },
      { label: "p-limit & co", value: 303_668 },
    ]);
    assertEquals(data.memory, [
      { label: "procpool forkProcess", value: 344 },
      { label: "p-limit", value: 656 },
    ]);
  });

  await t.step("an SVG with the commit in its title and one bar per row", () => {
    const svg = renderChart(data, "abc1234");
    assert(svg.startsWith("<svg") && svg.trimEnd().endsWith("</svg>"));
    assert(svg.includes("<title>procpool benchmarks at abc1234</title>"));
    // One background rect and one per bar; text is escaped.
    assertEquals(svg.match(/<rect /g)?.length, 1 + 4);
    assert(svg.includes("p-limit &amp; co") && !svg.includes("p-limit & co"));
    assert(svg.includes("1,311,808 /s") && svg.includes("656 B"));
  });

  await t.step("a table that is missing is an error naming it", () => {
    let message = "";
    try {
      parseTables("no tables here");
    } catch (error) {
      message = (error as Error).message;
    }
    assertEquals(message, 'no table with a column "tasks/s"');
  });

  await t.step("BENCHMARKS.md itself parses", async () => {
    const markdown = await Deno.readTextFile(new URL("../BENCHMARKS.md", import.meta.url));
    const parsed = parseTables(markdown);
    assert(parsed.throughput.some((bar) => bar.label === "p-limit" && bar.value > 0));
    assert(parsed.memory.some((bar) => bar.label === "procpool forkProcess"));
  });
});
