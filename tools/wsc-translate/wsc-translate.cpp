//===- wsc-translate.cpp - translations into and out of wsc IR ------------===//
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "wsc/Target/OnnxImport.h"

int main(int argc, char **argv) {
  wsc::registerOnnxImport();
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "wsc translator\n"));
}
