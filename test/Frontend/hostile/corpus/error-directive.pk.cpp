#error this spec refuses to build
