namespace pk { struct f32; template <class T, int R> struct Sym {}; long rank(); }
[[clang::annotate("pk.kernel")]] void k(pk::Sym<pk::f32, 1> x) { auto r = pk::rank(); }
