# SPDX-License-Identifier: BSD-3-Clause
# Applies UCG_SANITIZE to every target of the project.
if(UCG_SANITIZE)
    string(REPLACE ";" "," _ucg_san "${UCG_SANITIZE}")
    add_compile_options(-fsanitize=${_ucg_san} -fno-omit-frame-pointer
                        -fno-sanitize-recover=all)
    add_link_options(-fsanitize=${_ucg_san})
endif()
