# Caches inside zip archives (APK assets): the reader of libpack/archive and the commands that open
# ARCHIVE!/MEMBER (tests/archive/archive.sh).
add_executable(archive_members ${CMAKE_CURRENT_LIST_DIR}/archive_members.c)
target_link_libraries(archive_members PRIVATE xpack_pack)
add_test(NAME archive_members_cli
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/archive.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>
                 $<TARGET_FILE:archive_members>)
# Programs and weight files inside zip archives: pack, run, inspect and verify --model read ARCHIVE!/MEMBER
# (tests/archive/models_in_archive.sh).
add_test(NAME archive_models_cli
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/models_in_archive.sh $<TARGET_FILE:xpack> $<TARGET_FILE:xpack-genmodel>)
