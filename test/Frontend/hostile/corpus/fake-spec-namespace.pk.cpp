namespace pk { inline long rank() { return 3; } }
PK_KERNEL void k() { auto r = pk::rank(); }
#define PK_KERNEL
