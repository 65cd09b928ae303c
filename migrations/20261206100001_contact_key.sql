-- The comparison key of an agent's contact endpoint (scheme, the address its host reaches — every
-- loopback spelling one —, port, path with its case folded, no query: ADR 0081,
-- services/manager/src/league/contact_key.rs). Two endpoints with one key reach one agent, so one agent
-- alone may hold a key; the stored contact endpoint keeps the host as given (TLS needs the name).
--
-- The key needs host names resolved, which SQL cannot do: the manager fills it in for the rows of
-- before when it starts, the first registered keeping a key two rows share (contact_key::fill_in).
-- A row without a key holds nothing; the text comparison it replaces let clones in (issue 53 item 2).
alter table agents add column contact_key text;
alter table agents add constraint agents_contact_key_key unique (contact_key);
alter table agents drop constraint agents_contact_endpoint_key;
