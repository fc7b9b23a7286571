pk.kernel @k() {
  pk.bogus
  pk.return
}
