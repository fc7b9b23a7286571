pk.kernel @k() {
  pk.return
