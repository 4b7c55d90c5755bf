// Surface remesh of the armadillo for data/meshes/armadillo-quality (gmsh 4.8.4; see data/meshes/README.md).
// gmsh -2 armadillo-remesh.geo -format stl -o armadillo-remeshed.stl, with armadillo.stl the scaled surface;
// then weld, write OFF, and: tetgen -Q -pYq1.414/18 armadillo-remeshed.off
Merge "armadillo.stl";
ClassifySurfaces{Pi, 1, 1, Pi};
CreateGeometry;
Mesh.MeshSizeMax = 0.012;
Mesh.MeshSizeMin = 0.012;
Mesh.MeshSizeFromCurvature = 0;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.Algorithm = 6;
