// A user header for the include and depfile tests.
#pragma once
#define MY_TILE 128
