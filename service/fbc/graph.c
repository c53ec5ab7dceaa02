/* placeholder: module under construction */
extern int fbc_placeholder_fbc_graph_c;
