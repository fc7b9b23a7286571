PK_KERNEL void k() {}
