constexpr int f(int n) { return f(n + 1); }
constexpr int z = f(0);
