# Every test runs with a HOME and an XDG_CACHE_HOME of its own, folders under
# build/tests/home/ made afresh before each ctest run: no test reads or writes the user's
# default cache (~/.cache/xmatune/), and no two tests share one. A test that ran a program
# with the caller's environment (tool_install_prefix's installed `xmatune run --tune`)
# tuned into the real cache before (issue 50, item 2). Included by the top CMakeLists.txt
# before any folder adds tests; each folder with tests calls xmt_own_homes() after its
# add_test()s (set_property(TEST) reaches only the current folder's tests before CMake
# 3.28). The fixture around them all, suite_home (tests/CMakeLists.txt, own_home.py),
# checks that the real cache is untouched.
set(XMT_TEST_HOMES ${CMAKE_BINARY_DIR}/tests/home)
function(xmt_own_homes)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT
      "HOME=${XMT_TEST_HOMES}/${t}" "XDG_CACHE_HOME=${XMT_TEST_HOMES}/${t}/.cache")
    set_property(TEST ${t} APPEND PROPERTY FIXTURES_REQUIRED suite_home)
    set_property(GLOBAL APPEND PROPERTY XMT_OWN_HOME_TESTS ${t})
  endforeach()
endfunction()
