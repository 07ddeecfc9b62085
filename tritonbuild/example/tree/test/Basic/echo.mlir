// RUN: triton-opt %s | FileCheck %s
// CHECK: core value 42
// CHECK: opt: module
module {
}
