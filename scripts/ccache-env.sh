# Sourced (not run) by scripts/test.sh and scripts/demo.sh, from the
# repository root. Note [ccache for llama.cpp] in scripts/setup.sh: cmake gets
# ccache as its compiler launcher (llama-cpp-sys-2's build script passes every
# CMAKE_* variable on to cmake; cargo does not track them, so setting them
# never triggers a rebuild). Paths under the checkout are hashed relative to
# the working directory, and that directory not at all, so a clone elsewhere
# finds the same cache entries. Without ccache, nothing changes.
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR="$PWD"
  export CCACHE_NOHASHDIR=true
fi
