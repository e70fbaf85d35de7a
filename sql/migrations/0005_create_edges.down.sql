DROP TABLE lineage.edges;
