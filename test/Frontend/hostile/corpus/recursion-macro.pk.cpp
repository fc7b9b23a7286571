#define A A B
A
