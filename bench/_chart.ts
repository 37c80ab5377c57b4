// The SVG bar chart of the throughput and memory tables. It is drawn from the
// Markdown that bench:peers prints (and BENCHMARKS.md holds), so a chart made
// at the end of a run and one redrawn later from BENCHMARKS.md (bench/chart.ts)
// come from the same figures by the same code.

export interface Bar {
  readonly label: string;
  readonly value: number;
}

export interface ChartData {
  /** tasks/s by implementation */
  readonly throughput: readonly Bar[];
  /** heap bytes per queued task above the floor, by variant */
  readonly memory: readonly Bar[];
}

function cells(line: string): string[] {
  return line.trim().replace(/^\||\|$/g, "").split("|").map((cell) => cell.trim());
}

/** The table whose header has a column `column`: its header and rows. */
function table(markdown: string, column: string): { header: string[]; rows: string[][] } {
  const lines = markdown.split("\n");
  const at = lines.findIndex((line) => line.startsWith("|") && cells(line).includes(column));
  if (at === -1) throw new Error(`no table with a column "${column}"`);
  const rows: string[][] = [];
  for (let i = at + 2; i < lines.length && lines[i].startsWith("|"); i++) {
    rows.push(cells(lines[i]));
  }
  return { header: cells(lines[at]), rows };
}

function number(text: string): number {
  return Number(text.replaceAll(",", ""));
}

/** Reads the throughput and memory tables out of bench:peers' Markdown. */
export function parseTables(markdown: string): ChartData {
  const t = table(markdown, "tasks/s");
  const rate = t.header.indexOf("tasks/s");
  const m = table(markdown, "heap B/task above floor");
  const above = m.header.indexOf("heap B/task above floor");
  return {
    throughput: t.rows.map((row) => ({ label: row[0], value: number(row[rate]) })),
    memory: m.rows.filter((row) => row[above] !== "—").map((row) => ({
      label: row[0],
      value: number(row[above]),
    })),
  };
}

const WIDTH = 760;
const LABEL_WIDTH = 250;
const BAR_HEIGHT = 18;
const GAP = 6;
const PLOT = WIDTH - LABEL_WIDTH - 110;

function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function formatted(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

/** One panel of horizontal bars; procpool's bars are coloured, peers grey. */
function panel(
  title: string,
  bars: readonly Bar[],
  unit: string,
  top: number,
  log: boolean,
): { svg: string; height: number } {
  const max = Math.max(...bars.map((bar) => bar.value));
  const scale = (value: number) =>
    log
      ? PLOT * Math.log10(Math.max(value, 1)) / Math.log10(Math.max(max, 10))
      : PLOT * value / max;
  const parts = [
    `<text x="10" y="${top + 16}" font-weight="bold">${escape(title)}</text>`,
  ];
  bars.forEach((bar, index) => {
    const y = top + 28 + index * (BAR_HEIGHT + GAP);
    const width = Math.max(1, scale(bar.value));
    const colour = bar.label.startsWith("procpool")
      ? "#2f6fb0"
      : bar.label.startsWith("ref:")
      ? "#b8c4cf"
      : "#8a8a8a";
    parts.push(
      `<text x="${LABEL_WIDTH - 8}" y="${y + 13}" text-anchor="end">${escape(bar.label)}</text>`,
      `<rect x="${LABEL_WIDTH}" y="${y}" width="${
        width.toFixed(1)
      }" height="${BAR_HEIGHT}" fill="${colour}"/>`,
      `<text x="${(LABEL_WIDTH + width + 6).toFixed(1)}" y="${y + 13}">${
        formatted(bar.value)
      } ${unit}</text>`,
    );
  });
  return { svg: parts.join("\n"), height: 28 + bars.length * (BAR_HEIGHT + GAP) + 10 };
}

/** The chart as an SVG document; `commit` goes into its title. */
export function renderChart(data: ChartData, commit: string): string {
  const title = `procpool benchmarks at ${commit}`;
  const first = panel(
    "Throughput: tasks/s, 200,000 tiny tasks, concurrency 8 (log scale; longer is faster)",
    data.throughput,
    "/s",
    40,
    true,
  );
  const second = panel(
    "Memory: heap bytes per queued task above the floor (shorter is smaller)",
    data.memory,
    "B",
    40 + first.height + 10,
    false,
  );
  const height = 40 + first.height + 10 + second.height + 10;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" ` +
    `viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<title>${escape(title)}</title>`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">${escape(title)}</text>`,
    first.svg,
    second.svg,
    "</svg>",
    "",
  ].join("\n");
}
