// The pkc command line: parses flags, runs the phases, writes the output atomically.
#pragma once

namespace pk {
int runPkcDriver(int argc, char **argv);
}
