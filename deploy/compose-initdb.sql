-- One database per service that stores data (each owns its data; the table shard stores none);
-- the services create their tables.
CREATE DATABASE lobby;
CREATE DATABASE cashier;
CREATE DATABASE fairness;
CREATE DATABASE history;
