pk.kernel @k(%x: !pk.sym<?xbf16>) {
  %n = pk.dim %x, 3 : !pk.sym<?xbf16>
  pk.return
}
