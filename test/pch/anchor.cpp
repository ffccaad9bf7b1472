// A target that only precompiles headers still needs a source file of its own (CMake compiles the PCH for
// it). Nothing else: the tests take the PCH with REUSE_FROM.
