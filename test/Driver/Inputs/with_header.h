// A user's own header, for the depfile of a spec read from standard input (test/Driver/stdin.test).
#pragma once
constexpr int kRowsPerTile = 16;
