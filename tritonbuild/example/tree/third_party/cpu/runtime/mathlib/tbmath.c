__attribute__((visibility("default"))) double tbmath_twice(double x) { return 2.0 * x; }
