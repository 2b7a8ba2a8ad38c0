-- Antler's own role: not a superuser, so PostgreSQL's row-level security keeps each tenant's
-- rows apart for it (a superuser, like the image's POSTGRES_USER, would skip the policies).
CREATE ROLE antler_gateway LOGIN PASSWORD 'antler' NOSUPERUSER NOBYPASSRLS;
CREATE DATABASE antler_gateway OWNER antler_gateway;
