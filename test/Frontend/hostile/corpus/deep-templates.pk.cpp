#include <pk/spec.h>
using namespace pk;
template <class T> struct W { using t = W<W<T>>; };
W<int>::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t::t z;
