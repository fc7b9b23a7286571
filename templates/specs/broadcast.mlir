// Broadcast: y on every rank becomes a copy of x on rank `root` (a run-time argument).
pk.kernel @broadcast(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>, %root: index) {
  pk.coll.broadcast %x into %y root %root : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.return
}
