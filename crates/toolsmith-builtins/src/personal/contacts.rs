//! Contacts (003 §5): people with an email, phone, company, job title, relationship,
//! birthday, address, notes and a favourite flag. Indexed: relationship as `category`,
//! favourite as `weight` (favourites first); every text field is searched.

use toolsmith_core::data::RecordOrder;

use super::fields::{Field, FieldKind};
use super::{BY_CREATED, BY_UPDATED, Family, Index, Op, Sort, ToolSpec, Weight};

static FIELDS: &[Field] = &[
    Field::new("name", FieldKind::Text(200), "Contact name.")
        .required()
        .searched(),
    Field::new("email", FieldKind::Email, "Email address.").searched(),
    Field::new("phone", FieldKind::Text(50), "Phone number.").searched(),
    Field::new("company", FieldKind::Text(200), "Company/organization.").searched(),
    Field::new("jobTitle", FieldKind::Text(200), "Job title/role.").searched(),
    Field::new(
        "relationship",
        FieldKind::Text(100),
        "Relationship type (e.g. \"friend\", \"colleague\").",
    )
    .searched(),
    Field::new(
        "birthday",
        FieldKind::Date,
        "Birthday in YYYY-MM-DD format.",
    ),
    Field::new("address", FieldKind::Text(1000), "Physical address.").searched(),
    Field::new(
        "notes",
        FieldKind::Text(5000),
        "Additional details about the person.",
    )
    .searched(),
    Field::new("isFavorite", FieldKind::Flag, "Mark as favorite."),
];

pub static FAMILY: Family = Family {
    collection: "contact",
    plural: "contacts",
    noun: "contact",
    category: "Contacts",
    id_prefix: "ct",
    id_param: "contactId",
    one: "contact",
    many: "contacts",
    batch_param: "contacts",
    list_tool: "list_contacts",
    fields: FIELDS,
    index: Index {
        kind: None,
        category: Some("relationship"),
        weight: Weight::Flag("isFavorite"),
        at: None,
        tags: None,
    },
    range: None,
    sorts: &[
        Sort {
            name: "favorites",
            order: RecordOrder::Weight,
            description: "favorites first, then newest",
        },
        BY_CREATED,
        BY_UPDATED,
    ],
    tools: TOOLS,
    dedup: None,
    check: None,
    rules: None,
};

pub static TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "add_contact",
        op: Op::Add,
        description: "Add a new contact (a person in the user's address book) with email, phone, company, \
         job title, relationship, birthday and address.",
        tags: &[
            "contact",
            "person",
            "people",
            "address book",
            "phone",
            "email",
            "add",
            "save",
        ],
    },
    ToolSpec {
        name: "batch_add_contacts",
        op: Op::BatchAdd,
        description: "Add multiple contacts at once (up to 50), each like add_contact.",
        tags: &[
            "contact", "people", "batch", "many", "bulk", "add", "import",
        ],
    },
    ToolSpec {
        name: "list_contacts",
        op: Op::List,
        description: "List and search contacts (look someone up: phone number, email, company) with \
         filtering by relationship, favorites and words in any of their details.",
        tags: &[
            "contact",
            "contacts",
            "person",
            "people",
            "list",
            "find",
            "lookup",
            "phone number",
            "email address",
        ],
    },
    ToolSpec {
        name: "update_contact",
        op: Op::Update,
        description: "Update a contact's information (null clears an optional field).",
        tags: &["contact", "person", "update", "edit", "change"],
    },
    ToolSpec {
        name: "delete_contact",
        op: Op::Delete,
        description: "Delete a contact.",
        tags: &["contact", "person", "delete", "remove"],
    },
];
