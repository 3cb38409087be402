-- One database per service (each service owns its data); the services create their tables.
CREATE DATABASE lobby;
CREATE DATABASE "table";
CREATE DATABASE cashier;
CREATE DATABASE fairness;
CREATE DATABASE history;
