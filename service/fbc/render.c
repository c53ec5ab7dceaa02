/* placeholder: module under construction */
extern int fbc_placeholder_fbc_render_c;
