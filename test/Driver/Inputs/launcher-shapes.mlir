// Launcher input: a static extent, a local output, and argument names that clash with
// the launcher's own parameters.
pk.kernel @sum2d(%ctx: !pk.sym<4096xbf16>, %stream: !pk.tensor<4096xbf16>) {
  pk.coll.all_reduce <sum> %ctx into %stream : !pk.sym<4096xbf16>, !pk.tensor<4096xbf16>
  pk.return
}
