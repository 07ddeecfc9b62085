# Like Triton's unittest/googletest.cmake: googletest is fetched while CMake configures (a git clone), unless
# GOOGLETEST_DIR or FETCHCONTENT_SOURCE_DIR_GOOGLETEST points at a local checkout.
include(FetchContent)

set(GOOGLETEST_DIR "" CACHE STRING "Location of local GoogleTest repo to build against")
if(GOOGLETEST_DIR)
  set(FETCHCONTENT_SOURCE_DIR_GOOGLETEST ${GOOGLETEST_DIR} CACHE STRING "GoogleTest source directory override")
endif()

FetchContent_Declare(
  googletest
  GIT_REPOSITORY https://github.com/google/googletest.git
  GIT_TAG v1.17.0
  )
FetchContent_MakeAvailable(googletest)
