// Preloaded (`node --import`) into a traced Arbor server by the tracing bench's `--toggle`
// mode (bench/tracing-bench.ts): SIGUSR2 pauses tracing's hooks, the next SIGUSR2 resumes
// them, so that one process can be measured with and without tracing in alternate windows.
// Bench only: no image or manifest starts Arbor with it.
const spans = new URL('../dist/src/tracing/spans.js', import.meta.url);
let resume;
process.on('SIGUSR2', () => {
  void import(spans.href).then(({ pauseTracing }) => {
    if (resume === undefined) resume = pauseTracing();
    else {
      resume();
      resume = undefined;
    }
    process.stderr.write(`[toggle] tracing ${resume === undefined ? 'on' : 'paused'}\n`);
  });
});
