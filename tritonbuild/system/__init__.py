"""The system helpers (edge): what runs programs, touches files and reaches the network for every stage. Each
module is the one way of its kind: ``proc`` runs every child (argument lists, no shell, own sessions), ``safegit``
every git, ``http`` every download, ``archive`` every extraction, ``fileutil`` keeps paths inside their roots,
``diskspace`` words a full disk, ``elf`` reads ELF files, ``paths`` finds the data files, ``progress`` reads Ninja's
output. They import only the base layer (the top-level modules), never a stage package."""
